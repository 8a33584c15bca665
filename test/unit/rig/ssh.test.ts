/** The SSH layer's pure parts: the command line a sudo login runs, how a refused sudo is told apart, where its uploads are staged. No host needed. */
import t from 'tap';
import { remoteCommandLine, sudoRefusal, uploadStagingDir } from '../../../rig/ssh.ts';

t.test('a root login runs bash -c; a sudo login runs the same behind sudo -n', async (t) => {
  t.equal(remoteCommandLine("echo 'a b'", false), `bash -c 'echo '\\''a b'\\'''`);
  t.equal(remoteCommandLine("echo 'a b'", true), `sudo -n bash -c 'echo '\\''a b'\\'''`);
});

t.test("sudo's refusals are told apart from a command that failed, and from sudo's warnings", async (t) => {
  t.equal(sudoRefusal(1, 'sudo: a password is required\n'), 'sudo refused: a password is required');
  t.equal(sudoRefusal(1, 'admin is not in the sudoers file.  This incident will be reported.\n'), null, 'not at the start of a sudo: line');
  t.equal(sudoRefusal(1, 'sudo: admin is not in the sudoers file.  This incident will be reported.\n'), 'sudo refused: admin is not in the sudoers file.  This incident will be reported.');
  t.equal(sudoRefusal(1, 'sudo: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper\n'), 'sudo refused: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper');
  t.equal(sudoRefusal(127, 'bash: line 1: sudo: command not found\n'), 'sudo is not installed');
  t.equal(sudoRefusal(127, 'bash: line 1: iptables: command not found\n'), null, "a command of the rig's that is missing is its own failure");
  t.equal(sudoRefusal(1, 'sudo: unable to resolve host vm: Name or service not known\ngrep: no match\n'), null, "sudo's warning, then the command's own failure");
  t.equal(sudoRefusal(0, 'sudo: a password is required\n'), null, 'it ran');
});

t.test("a sudo login's uploads are staged in a folder of its own inside dataDir", async (t) => {
  t.equal(uploadStagingDir({ dataDir: '/srv/cqb/broker-1/clink', ssh: { user: 'admin', port: 22, privateKeyPath: '/k', knownHostsPath: '/kh', sudo: true } }), '/srv/cqb/broker-1/clink/.upload-admin');
});
