import type { Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';

const command: Command = {
  name: 'campaign plan',
  summary: 'not built yet',
  async run() {
    throw new QualError('INTERNAL', 'campaign plan is not built yet');
  },
};
export default command;
