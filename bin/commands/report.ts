import type { Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';

const command: Command = {
  name: 'report',
  summary: 'not built yet',
  async run() {
    throw new QualError('INTERNAL', 'report is not built yet');
  },
};
export default command;
