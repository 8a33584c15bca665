import type { Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';

const command: Command = {
  name: 'qualify mutants',
  summary: 'not built yet',
  async run() {
    throw new QualError('INTERNAL', 'qualify mutants is not built yet');
  },
};
export default command;
