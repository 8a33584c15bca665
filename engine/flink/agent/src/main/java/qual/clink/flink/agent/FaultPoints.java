package qual.clink.flink.agent;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The armed/fired files of one JVM, the same contract as Clink's engine/clink/fault-points.ts:
 * the harness writes {@code <dir>/armed.json}, {@code {"<point>": remainingCount}}; a thread
 * that reaches an armed point decrements the count (atomic rewrite), appends a fired record
 * to {@code <dir>/fired.jsonl} (forced to disk), prints one evidence line to stderr (the
 * service's out.log) and halts the JVM at once ({@link Runtime#halt}: no shutdown hooks, no
 * cleanup, as a SIGKILL would). The armed file is re-read only when its mtime, size or
 * inode changes.
 */
public final class FaultPoints {
  /** The evidence line's prefix, which the plug and the tests look for. */
  public static final String FIRED_LINE = "clink-qual fault point fired:";
  /** The armed file's key prefix of a point armed to stop its JVM instead of halting it (engine/armed-key.ts). */
  static final String PAUSE_PREFIX = "pause@";

  /** The exit status of a JVM halted at a point (what a SIGKILL leaves: 128 + 9). */
  public static final int HALT_STATUS = 137;

  private static volatile FaultPoints instance;

  private final Path armedFile;
  private final Path firedFile;
  private final String host;
  private final String role;
  private String cacheKey = "";
  private Map<String, Integer> armed = new LinkedHashMap<>();

  FaultPoints(Path dir, String host, String role) {
    this.armedFile = dir.resolve("armed.json");
    this.firedFile = dir.resolve("fired.jsonl");
    this.host = host;
    this.role = role;
  }

  static void install(FaultPoints p) {
    instance = p;
  }

  /** Threads inside CommitterOperator.initializeState (the re-commit of restored committables). */
  private static final ThreadLocal<int[]> RECOVERING = ThreadLocal.withInitial(() -> new int[1]);

  public static void enterRecovery() {
    RECOVERING.get()[0]++;
  }

  public static void exitRecovery() {
    int[] d = RECOVERING.get();
    if (d[0] > 0) d[0]--;
  }

  public static boolean recovering() {
    return RECOVERING.get()[0] > 0;
  }

  /** Called from the advice at a point; returns only when the point is not armed here. */
  public static void reach(String point, long checkpointId) {
    FaultPoints p = instance;
    if (p == null) return;
    try {
      p.reachHere(point, checkpointId);
    } catch (IOException | RuntimeException e) {
      // A point that cannot be read or recorded does not fire (and says why): never a silent kill.
      System.err.println("clink-qual fault point " + point + ": not fired: " + e);
    }
  }

  private synchronized void reachHere(String point, long checkpointId) throws IOException {
    Map<String, Integer> a = load();
    String key = a.getOrDefault(point, 0) > 0 ? point : a.getOrDefault(PAUSE_PREFIX + point, 0) > 0 ? PAUSE_PREFIX + point : null;
    if (key == null) return;
    boolean pause = !key.equals(point);
    int n = a.get(key);
    Map<String, Integer> next = new LinkedHashMap<>(a);
    if (n - 1 > 0) next.put(key, n - 1);
    else next.remove(key);
    writeAtomic(armedFile, toJson(next));
    long pid = ProcessHandle.current().pid();
    String at = Instant.now().toString();
    StringBuilder rec = new StringBuilder()
        .append("{\"point\":").append(quote(point))
        .append(",\"host\":").append(quote(host))
        .append(",\"role\":").append(quote(role))
        .append(",\"at\":").append(quote(at))
        .append(",\"pid\":").append(pid);
    if (checkpointId >= 0) rec.append(",\"checkpointId\":").append(checkpointId);
    if (pause) rec.append(",\"action\":\"pause\"");
    rec.append("}\n");
    appendDurable(firedFile, rec.toString());
    System.err.println(FIRED_LINE + " point=" + point + " host=" + host + " role=" + role + " pid=" + pid
        + (checkpointId >= 0 ? " checkpoint=" + checkpointId : "") + " thread=" + Thread.currentThread().getName() + " at=" + at
        + (pause ? " action=pause" : ""));
    System.err.flush();
    if (!pause) Runtime.getRuntime().halt(HALT_STATUS);
    stopSelf(point, pid, checkpointId);
  }

  /**
   * Stops this JVM (SIGSTOP, sent by kill(1): Java has no call for it) and returns once the
   * harness continues it, saying how long it was stopped: every thread stops, as in a frozen
   * VM, and this one goes on from the point, holding the monitor of this class meanwhile
   * (another thread that reaches a point waits, as it would behind a stalled one).
   */
  private static void stopSelf(String point, long pid, long checkpointId) throws IOException {
    long t0 = System.nanoTime();
    Process kill = new ProcessBuilder("kill", "-STOP", Long.toString(pid)).redirectErrorStream(true).start();
    try {
      kill.waitFor();
      // The stop lands as the signal is delivered; never go on before it did.
      while (System.nanoTime() - t0 < 2_000_000_000L) Thread.sleep(100);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    long stoppedMs = (System.nanoTime() - t0) / 1_000_000L;
    System.err.println("clink-qual fault point " + point + ": pid " + pid + " resumed after " + stoppedMs + " ms stopped"
        + (checkpointId >= 0 ? " at checkpoint " + checkpointId : "") + "; going on from the point (thread " + Thread.currentThread().getName() + ")");
    System.err.flush();
  }

  private Map<String, Integer> load() throws IOException {
    BasicFileAttributes st;
    try {
      st = Files.readAttributes(armedFile, BasicFileAttributes.class);
    } catch (IOException missing) {
      cacheKey = "";
      armed = new LinkedHashMap<>();
      return armed;
    }
    String key = st.lastModifiedTime().toMillis() + ":" + st.size() + ":" + st.fileKey();
    if (!key.equals(cacheKey)) {
      armed = parse(Files.readString(armedFile, StandardCharsets.UTF_8));
      cacheKey = key;
    }
    return armed;
  }

  private static final Pattern ENTRY = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"\\s*:\\s*(-?\\d+)");

  /** The armed file's flat object of point name to count (what the plug writes; anything else is ignored). */
  static Map<String, Integer> parse(String json) {
    Map<String, Integer> out = new LinkedHashMap<>();
    Matcher m = ENTRY.matcher(json);
    while (m.find()) out.put(m.group(1), Integer.parseInt(m.group(2)));
    return out;
  }

  static String toJson(Map<String, Integer> m) {
    StringBuilder sb = new StringBuilder("{");
    for (Map.Entry<String, Integer> e : m.entrySet()) {
      if (sb.length() > 1) sb.append(',');
      sb.append(quote(e.getKey())).append(':').append(e.getValue());
    }
    return sb.append('}').toString();
  }

  static String quote(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') sb.append('\\').append(c);
      else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
      else sb.append(c);
    }
    return sb.append('"').toString();
  }

  private static void writeAtomic(Path file, String text) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".agent-tmp");
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
      ch.write(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
      ch.force(true);
    }
    try {
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  private static void appendDurable(Path file, String line) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
      ch.write(ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8)));
      ch.force(true);
    }
  }
}
