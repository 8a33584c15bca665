import type { Command } from '../../lib/cli.ts';
import { rigDown } from '../../rig/down.ts';

const command: Command = {
  name: 'rig down',
  summary: "Stop everything the rig started and remove it, but the uploaded components and the store's data and credentials, kept for the next 'rig up' (--purge removes those too)",
  description: `Stops every service on every host (over SSH where it answers), removes iptables
rules tagged clink-qual, kills what is left in the rig's namespaces or under the state
directory, deletes the namespaces, veths and bridge, and removes rig.json and the keys. Uploaded
components are kept for the next 'rig up', and so is the store's data (the bucket, with
the credentials that open it), so 'clink-qual verify RUN_DIR' can recount a stored run
after the next 'rig up'. --purge removes them too. Succeeds when nothing is up.

An inventory rig's hosts keep only those in their dataDir (--purge: nothing, and dataDir
itself when 'rig up' created it); its 'rig down' never touches the local rig's namespaces.
Once rig.json is gone, '--inventory FILE' names the hosts (e.g. 'rig down --inventory
hosts.yaml --purge' after a 'rig down').`,
  examples: ['clink-qual rig down', 'clink-qual rig down --purge', 'clink-qual rig down --inventory hosts.yaml --purge'],
  options: {
    purge: { type: 'boolean', description: "Also remove the components uploaded to the hosts and the store's data and credentials" },
    inventory: { type: 'string', valueName: 'FILE', description: 'The inventory whose hosts to clear when no rig.json names them (an inventory rig already taken down)' },
  },
  async run({ values }) {
    const t0 = Date.now();
    // One command on the rig at a time (exit 2 naming the holder); released when this process ends.
    (await import('../../rig/lock.ts')).acquireRigLock('rig down', { log: (l) => console.log(`rig down: ${l}`) });
    const r = await rigDown({ purge: Boolean(values.purge), ...(typeof values.inventory === 'string' ? { inventory: values.inventory } : {}), log: (l) => console.log(`rig down: ${l}`) });
    console.log(
      `rig down: done (${((Date.now() - t0) / 1000).toFixed(1)} s): ${r.hostsStopped.length} host(s) stopped over SSH, ${r.killed} process(es) killed, ${r.namespaces} namespace(s), ${r.links} link(s), ${r.rules} rule(s) removed`,
    );
  },
};
export default command;
