import type { Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';

const command: Command = {
  name: 'campaign run',
  summary: 'not built yet',
  async run() {
    throw new QualError('INTERNAL', 'campaign run is not built yet');
  },
};
export default command;
