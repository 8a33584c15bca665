import type { Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';

const command: Command = {
  name: 'verify',
  summary: 'not built yet',
  async run() {
    throw new QualError('INTERNAL', 'verify is not built yet');
  },
};
export default command;
