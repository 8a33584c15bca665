import type { Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';

const command: Command = {
  name: 'rig status',
  summary: 'not built yet',
  async run() {
    throw new QualError('INTERNAL', 'rig status is not built yet');
  },
};
export default command;
