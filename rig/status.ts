/**
 * `rig status`: each host (reachable over SSH?, its services with PID, state and health),
 * the Kafka cluster (registered brokers, active controller, KRaft quorum leader and voter
 * lag, from the Kafka protocol) and the store (which one, live on its health path, bucket present).
 */
import net from 'node:net';
import { tcpOpen } from './net.ts';
import { kafkaHealth, KAFKA_PORT, KAFKA_SERVICE, type KafkaHealth } from './kafka.ts';
import { listServices } from './services.ts';
import { SshRemote } from './ssh.ts';
import { readRigState, readStoreCredentials } from './state.ts';
import { storeHealth, storeKindOf, storeLive, storeServiceOf, type StoreHealth } from './store.ts';
import type { RigState, Role, StoreCredentials, StoreKind } from './types.ts';

export interface ServiceStatus {
  name: string;
  pid: number | null;
  state: 'running' | 'paused' | 'dead';
  healthy: boolean;
}

export interface HostStatus {
  name: string;
  address: string;
  roles: Role[];
  reachable: boolean;
  error?: string;
  services: ServiceStatus[];
}

export interface RigStatus {
  kind: RigState['kind'];
  createdAt: string;
  hosts: HostStatus[];
  kafka: KafkaHealth & { bootstrap: string; expectedBrokers: number[]; healthy: boolean };
  store: StoreHealth & { endpoint: string; bucket: string; kind: StoreKind; version: string };
  healthy: boolean;
}


export async function rigStatus(state: RigState = readRigState()): Promise<RigStatus> {
  let creds: StoreCredentials | null = null;
  try {
    creds = readStoreCredentials(state);
  } catch {
    creds = null;
  }
  const [kafka, store] = await Promise.all([kafkaHealth(state.kafka), storeHealth(state.store, creds)]);
  const hosts = await Promise.all(
    state.hosts.map(async (h): Promise<HostStatus> => {
      const r = new SshRemote(h, { readyTimeoutMs: 5_000 });
      try {
        const services = await listServices(r);
        const out: ServiceStatus[] = [];
        for (const s of services) {
          let healthy = s.state === 'running';
          if (healthy && s.name === KAFKA_SERVICE) {
            const b = state.kafka.brokers.find((x) => x.host === h.name);
            healthy = b ? (await tcpOpen(h.address, KAFKA_PORT)) && kafka.brokers.includes(b.nodeId) : false;
          } else if (healthy && s.name === storeServiceOf(state.store) && state.store.host === h.name) healthy = await storeLive(state.store.endpoint, storeKindOf(state.store));
          out.push({ name: s.name, pid: s.pid, state: s.state, healthy });
        }
        return { name: h.name, address: h.address, roles: h.roles, reachable: true, services: out };
      } catch (err) {
        return { name: h.name, address: h.address, roles: h.roles, reachable: false, error: (err as Error).message.split('\n')[0]!, services: [] };
      } finally {
        await r.close();
      }
    }),
  );
  const expectedBrokers = state.kafka.brokers.map((b) => b.nodeId);
  const kafkaHealthy = expectedBrokers.every((id) => kafka.brokers.includes(id)) && kafka.quorum !== null && kafka.quorum.leaderId >= 0;
  return {
    kind: state.kind,
    createdAt: state.createdAt,
    hosts,
    kafka: { ...kafka, bootstrap: state.kafka.bootstrap, expectedBrokers, healthy: kafkaHealthy },
    store: { ...store, endpoint: state.store.endpoint, bucket: state.store.bucket, kind: storeKindOf(state.store), version: state.store.version },
    healthy: hosts.every((h) => h.reachable && h.services.every((s) => s.healthy)) && kafkaHealthy && store.healthy && store.bucketPresent,
  };
}

export function renderStatus(s: RigStatus): string {
  const lines: string[] = [];
  lines.push(`${s.kind} rig, up since ${s.createdAt}: ${s.healthy ? 'HEALTHY' : 'NOT HEALTHY'}`);
  lines.push('');
  lines.push(`${'HOST'.padEnd(13)} ${'ADDRESS'.padEnd(15)} ${'ROLES'.padEnd(12)} ${'SSH'.padEnd(12)} SERVICES`);
  for (const h of s.hosts) {
    const svc = h.services.length ? h.services.map((x) => `${x.name} pid ${x.pid ?? '-'} ${x.state}${x.state === 'running' ? (x.healthy ? ' ok' : ' UNHEALTHY') : ''}`).join('; ') : h.reachable ? '-' : (h.error ?? '');
    lines.push(`${h.name.padEnd(13)} ${h.address.padEnd(15)} ${h.roles.join(',').padEnd(12)} ${(h.reachable ? 'reachable' : 'UNREACHABLE').padEnd(12)} ${svc}`);
  }
  lines.push('');
  const k = s.kafka;
  lines.push(`kafka  ${k.healthy ? 'ok' : 'NOT OK'}: brokers registered [${k.brokers.join(', ')}] of [${k.expectedBrokers.join(', ')}], active controller ${k.controllerId ?? '-'}, bootstrap ${k.bootstrap}`);
  if (k.quorum) lines.push(`       KRaft quorum: leader ${k.quorum.leaderId} (epoch ${k.quorum.leaderEpoch}), high watermark ${k.quorum.highWatermark}, voters ${k.quorum.voters.map((v) => `${v.id} (lag ${v.lagBehindLeader})`).join(', ')}`);
  if (k.error) lines.push(`       error: ${k.error}`);
  lines.push(`store  ${s.store.healthy && s.store.bucketPresent ? 'ok' : 'NOT OK'}: ${s.store.kind} ${s.store.version} at ${s.store.endpoint} live ${s.store.healthy ? 'yes' : 'no'}, bucket ${s.store.bucket} ${s.store.bucketPresent ? 'present' : 'MISSING'}${s.store.error ? ` (${s.store.error})` : ''}`);
  return lines.join('\n');
}
