/**
 * Where integration tests find Kafka and the S3 store: the live rig's state (the default,
 * as in CI), or, for development against loopback servers, the environment:
 * CLINK_QUAL_KAFKA_BOOTSTRAP, CLINK_QUAL_S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY.
 */
import { readRigState, readStoreCredentials } from '../../rig/state.ts';

export interface TestEndpoints {
  kafkaBootstrap: string;
  s3: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string };
  bucket: string;
}

export function testEndpoints(): TestEndpoints {
  const env = process.env;
  if (env.CLINK_QUAL_S3_ENDPOINT && env.CLINK_QUAL_KAFKA_BOOTSTRAP) {
    return {
      kafkaBootstrap: env.CLINK_QUAL_KAFKA_BOOTSTRAP,
      s3: { endpoint: env.CLINK_QUAL_S3_ENDPOINT, region: 'us-east-1', accessKeyId: env.AWS_ACCESS_KEY_ID ?? '', secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? '' },
      bucket: env.CLINK_QUAL_BUCKET ?? 'clink-qual',
    };
  }
  const state = readRigState();
  const creds = readStoreCredentials(state);
  return {
    kafkaBootstrap: state.kafka.bootstrap,
    s3: { endpoint: state.store.endpoint, region: state.store.region, ...creds },
    bucket: state.store.bucket,
  };
}
