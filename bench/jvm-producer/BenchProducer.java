/*
 * The benchmark's line producer on the JVM (bench/jvm-producer.ts starts it; see there for why).
 *
 * It writes exactly the lines the Node producers write (test/helpers/rig-kit.ts LineProducer,
 * bench/producer-thread.ts): {"p":P,"seq":S,"pad":"x..."} with no key, to the partition P the
 * caller names, with an idempotent producer and acks=all. The caller numbers the events; this
 * process only builds and sends them.
 *
 * Arguments: bootstrap (host:port,...), topic, pad bytes, retries.
 * Standard input, one request a line:
 *   <id> <p>:<first seq>:<count>[ <p>:<first seq>:<count>...]   send these events
 *   <id> close                                                  flush, close, answer, exit
 * Standard output, one answer a request, once Kafka acknowledged every event of it (or one failed):
 *   clink-bench-reply <id> ok
 *   clink-bench-reply <id> error <message>
 * The first line is "clink-bench-reply 0 ready". Any other line on standard output (a logger's)
 * is not an answer.
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class BenchProducer {
  private static final String REPLY = "clink-bench-reply ";
  private static PrintStream out;

  private static synchronized void reply(String line) {
    out.print(REPLY + line + "\n");
    out.flush();
  }

  /** The line of event (p, seq): the bytes of JSON.stringify({ p, seq, pad }). */
  static byte[] line(int p, long seq, String pad) {
    return ("{\"p\":" + p + ",\"seq\":" + seq + ",\"pad\":\"" + pad + "\"}").getBytes(StandardCharsets.US_ASCII);
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: BenchProducer <bootstrap> <topic> <pad bytes> <retries>");
      System.exit(2);
    }
    out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    final String topic = args[1];
    final String pad = "x".repeat(Integer.parseInt(args[2]));
    Properties props = new Properties();
    props.put("bootstrap.servers", args[0]);
    props.put("client.id", "clink-bench-jvm-producer");
    props.put("acks", "all");
    props.put("enable.idempotence", "true");
    props.put("retries", args[3]);
    props.put("retry.backoff.ms", "500");
    props.put("delivery.timeout.ms", "120000");
    props.put("linger.ms", "1");
    props.put("batch.size", String.valueOf(256 * 1024));
    props.put("compression.type", "none");
    // A send that cannot learn the topic's leaders fails after 10 s, answered, instead of holding the request line for a minute.
    props.put("max.block.ms", "10000");
    KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    reply("0 ready");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
    String req;
    while ((req = in.readLine()) != null) {
      if (req.isBlank()) continue;
      String[] parts = req.trim().split(" ");
      final String id = parts[0];
      if (parts.length == 2 && parts[1].equals("close")) {
        producer.close(Duration.ofSeconds(5));
        reply(id + " ok");
        return;
      }
      long total = 0;
      int[] ps = new int[parts.length - 1];
      long[] firsts = new long[parts.length - 1];
      int[] counts = new int[parts.length - 1];
      try {
        for (int i = 1; i < parts.length; i++) {
          String[] r = parts[i].split(":");
          ps[i - 1] = Integer.parseInt(r[0]);
          firsts[i - 1] = Long.parseLong(r[1]);
          counts[i - 1] = Integer.parseInt(r[2]);
          total += counts[i - 1];
        }
      } catch (RuntimeException e) {
        reply(id + " error unreadable request: " + req);
        continue;
      }
      if (total == 0) {
        reply(id + " ok");
        continue;
      }
      final AtomicInteger left = new AtomicInteger((int) total);
      final AtomicReference<String> failed = new AtomicReference<>();
      try {
        for (int i = 0; i < ps.length; i++) {
          for (int k = 0; k < counts[i]; k++) {
            producer.send(new ProducerRecord<>(topic, ps[i], null, line(ps[i], firsts[i] + k, pad)), (md, err) -> {
              if (err != null) failed.compareAndSet(null, err.toString().replace('\n', ' '));
              if (left.decrementAndGet() == 0) reply(id + (failed.get() == null ? " ok" : " error " + failed.get()));
            });
          }
        }
      } catch (RuntimeException e) {
        // A send refused before it was queued: its callback never runs, so the request is answered here.
        reply(id + " error " + e.toString().replace('\n', ' '));
      }
    }
    producer.close(Duration.ofSeconds(5));
  }
}
