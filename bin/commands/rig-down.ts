import type { Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';

const command: Command = {
  name: 'rig down',
  summary: 'not built yet',
  async run() {
    throw new QualError('INTERNAL', 'rig down is not built yet');
  },
};
export default command;
