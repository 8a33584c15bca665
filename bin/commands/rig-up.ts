import type { Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';

const command: Command = {
  name: 'rig up',
  summary: 'not built yet',
  async run() {
    throw new QualError('INTERNAL', 'rig up is not built yet');
  },
};
export default command;
