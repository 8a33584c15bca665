/**
 * Clink's object keys: each checkpoint's commit of a subtask is one object at
 * `<prefix>subtask=S/epoch=E/chk=C.jsonl`. The sink builds them; the plug reads them back
 * for the harness (engine/clink/tamper.ts: the store-tamper fault's target, the findings'
 * place of an object). Another engine's keys do not parse (null).
 */

/** Where a Clink object belongs: its subtask, the epoch (attempt) that wrote it, its checkpoint. */
export interface ClinkKeyPlace {
  subtask: number;
  epoch: number;
  checkpointId: number;
}

const CLINK_KEY = /subtask=(\d+)\/epoch=(\d+)\/chk=(\d+)\.jsonl$/;

/** The key of the object a subtask commits for a checkpoint in an epoch. */
export function clinkObjectKey(prefix: string, p: ClinkKeyPlace): string {
  return `${prefix}subtask=${p.subtask}/epoch=${p.epoch}/chk=${p.checkpointId}.jsonl`;
}

/** The place a Clink key names, or null for a key of another layout. */
export function parseClinkKey(key: string): ClinkKeyPlace | null {
  const m = CLINK_KEY.exec(key);
  return m ? { subtask: Number(m[1]), epoch: Number(m[2]), checkpointId: Number(m[3]) } : null;
}
