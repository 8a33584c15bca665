package qual.clink.findings;

import com.amazonaws.auth.AWSStaticCredentialsProvider;
import com.amazonaws.auth.BasicAWSCredentials;
import com.amazonaws.client.builder.AwsClientBuilder.EndpointConfiguration;
import com.amazonaws.services.s3.AmazonS3;
import com.amazonaws.services.s3.AmazonS3ClientBuilder;
import com.amazonaws.services.s3.model.AmazonS3Exception;
import com.amazonaws.services.s3.model.ListMultipartUploadsRequest;
import com.amazonaws.services.s3.model.ObjectMetadata;
import com.amazonaws.services.s3.model.PartETag;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.RecoverableFsDataOutputStream;
import org.apache.flink.core.fs.RecoverableWriter;
import org.apache.flink.core.io.SimpleVersionedSerialization;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.fs.s3.common.writer.S3Recoverable;
import org.apache.flink.fs.s3hadoop.S3FileSystemFactory;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Finding F-2: Flink 2.2.0's S3 committer ({@code S3Committer.commitAfterRecovery}) takes any
 * object of the expected length at its key as its own earlier commit.
 *
 * <p>For each case it does what a Flink FileSink does around a crash, with Flink's own
 * {@code S3RecoverableWriter} (flink-s3-fs-hadoop, through its {@code S3FileSystemFactory}): open
 * a recoverable stream, write JSON lines, {@code closeForCommit()}, serialize the
 * {@code CommitRecoverable} with the writer's serializer (what a checkpoint stores),
 * {@code commit()}. Then it changes what is at the key with a plain S3 client, deserializes the
 * recoverable and calls {@code recoverForCommit(recoverable).commitAfterRecovery()} (what the
 * restored committer does), and reports whether that threw and what object is left.
 *
 * <p>Cases: {@code original} (the object is Flink's own: accepting is right),
 * {@code foreign-same-length} (a different object of the same length: the lines in reverse
 * order, put with a plain PUT), {@code foreign-other-length} (a different object one line
 * longer), {@code absent} (no object, and the upload is gone because it completed). Only the
 * first should be accepted. Each line also says what a stronger check would have answered: the
 * object's ETag against the multipart ETag computed from the checkpointed recoverable's parts.
 *
 * <p>Environment: F2_ENDPOINT (http://127.0.0.1:PORT), F2_USER, F2_PASSWORD (never printed),
 * F2_BUCKET, F2_TMP (a directory for the writer's local buffers), F2_MINIO (the store's
 * version, for the RESULT line). Prints one line per case and
 * {@code RESULT flink_recommit_length_only ...}; exits 0 when every case ran, whatever Flink did.
 */
public final class RecommitLengthOnly {

    private RecommitLengthOnly() {}

    private static String env(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) throw new IllegalStateException("missing environment variable " + name);
        return v;
    }

    /** Lines shaped like the harness's committed records: one JSON object a line. */
    private static List<String> lines(String tag, int count) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(String.format("{\"partition\":0,\"seq\":%d,\"case\":\"%s\",\"payload\":\"%s\"}\n", i, tag, "x".repeat(40 + (i % 7))));
        }
        return out;
    }

    private static String join(List<String> ls) {
        return String.join("", ls);
    }

    /** The object at the key: "size B, ETag e" or "absent". */
    private static String describe(AmazonS3 s3, String bucket, String key) {
        try {
            ObjectMetadata m = s3.getObjectMetadata(bucket, key);
            return m.getContentLength() + " B, ETag " + m.getETag();
        } catch (AmazonS3Exception e) {
            if (e.getStatusCode() == 404) return "absent";
            throw e;
        }
    }

    /**
     * The multipart ETag S3 and MinIO give an object completed from these parts (MD5 of the
     * parts' binary MD5s, a dash, the part count): what a stronger recovery check could compare
     * with the object's ETag, from the checkpointed recoverable alone.
     */
    private static String multipartEtag(List<PartETag> parts) throws Exception {
        MessageDigest md5 = MessageDigest.getInstance("MD5");
        for (PartETag p : parts) md5.update(HexFormat.of().parseHex(p.getETag().replace("\"", "")));
        return HexFormat.of().formatHex(md5.digest()) + "-" + parts.size();
    }

    /** The object's ETag without quotes, or null when there is no object. */
    private static String etag(AmazonS3 s3, String bucket, String key) {
        try {
            return s3.getObjectMetadata(bucket, key).getETag().replace("\"", "");
        } catch (AmazonS3Exception e) {
            if (e.getStatusCode() == 404) return null;
            throw e;
        }
    }

    private static String firstLine(Throwable t) {
        String m = String.valueOf(t.getMessage());
        int nl = m.indexOf('\n');
        return t.getClass().getSimpleName() + ": " + (nl < 0 ? m : m.substring(0, nl));
    }

    public static void main(String[] args) throws Exception {
        String endpoint = env("F2_ENDPOINT");
        String user = env("F2_USER");
        String password = env("F2_PASSWORD");
        String bucket = env("F2_BUCKET");
        String tmp = env("F2_TMP");
        String minio = System.getenv().getOrDefault("F2_MINIO", "unknown");

        AmazonS3 s3 = AmazonS3ClientBuilder.standard()
                .withEndpointConfiguration(new EndpointConfiguration(endpoint, "us-east-1"))
                .withPathStyleAccessEnabled(true)
                .withCredentials(new AWSStaticCredentialsProvider(new BasicAWSCredentials(user, password)))
                .build();
        if (!s3.doesBucketExistV2(bucket)) s3.createBucket(bucket);

        // The keys the rig's Flink cluster sets (engine/flink/config.ts), and a local buffer dir.
        Configuration conf = new Configuration();
        conf.setString("s3.endpoint", endpoint);
        conf.setString("s3.path.style.access", "true");
        conf.setString("s3.access-key", user);
        conf.setString("s3.secret-key", password);
        conf.setString("io.tmp.dirs", tmp);
        S3FileSystemFactory factory = new S3FileSystemFactory();
        factory.configure(conf);
        FileSystem fs = factory.create(URI.create("s3://" + bucket + "/"));
        RecoverableWriter writer = fs.createRecoverableWriter();
        SimpleVersionedSerializer<RecoverableWriter.CommitRecoverable> serializer = writer.getCommitRecoverableSerializer();
        System.out.println("flink-s3-fs-hadoop 2.2.0 " + writer.getClass().getName() + " against MinIO " + minio + " at " + endpoint);

        String[] cases = {"original", "foreign-same-length", "foreign-other-length", "absent"};
        Map<String, String> outcome = new LinkedHashMap<>();
        for (String c : cases) {
            String key = "runs/finding-f2/part-" + c + "-0.jsonl";
            List<String> own = lines(c, 1000);
            byte[] ownBytes = join(own).getBytes(StandardCharsets.UTF_8);

            // 1. The writer's part file, closed for commit; its recoverable as a checkpoint keeps it.
            RecoverableFsDataOutputStream out = writer.open(new Path("s3://" + bucket + "/" + key));
            out.write(ownBytes);
            RecoverableFsDataOutputStream.Committer committer = out.closeForCommit();
            byte[] checkpointed = SimpleVersionedSerialization.writeVersionAndSerialize(serializer, committer.getRecoverable());
            committer.commit();
            String committed = describe(s3, bucket, key);

            // 2. What a recovering committer then finds at the key.
            String change;
            switch (c) {
                case "original":
                    change = "left as committed";
                    break;
                case "foreign-same-length": {
                    List<String> reversed = new ArrayList<>(own);
                    Collections.reverse(reversed);
                    s3.putObject(bucket, key, join(reversed));
                    change = "replaced by a plain PUT of the same lines in reverse order";
                    break;
                }
                case "foreign-other-length": {
                    List<String> reversed = new ArrayList<>(own);
                    Collections.reverse(reversed);
                    reversed.add(lines("extra", 1).get(0));
                    s3.putObject(bucket, key, join(reversed));
                    change = "replaced by a plain PUT of the lines in reverse order plus one";
                    break;
                }
                default:
                    s3.deleteObject(bucket, key);
                    change = "deleted";
            }
            String before = describe(s3, bucket, key);
            int uploads = s3.listMultipartUploads(new ListMultipartUploadsRequest(bucket).withPrefix(key)).getMultipartUploads().size();

            // 3. The restored committer: deserialize the checkpointed recoverable, commit after recovery.
            RecoverableWriter.CommitRecoverable restored = SimpleVersionedSerialization.readVersionAndDeSerialize(serializer, checkpointed);
            String reaction;
            boolean accepted;
            try {
                writer.recoverForCommit(restored).commitAfterRecovery();
                reaction = "accepted (no exception)";
                accepted = true;
            } catch (IOException e) {
                reaction = "threw " + firstLine(e);
                accepted = false;
            }
            String after = describe(s3, bucket, key);
            // What a check by the multipart ETag (computed from the checkpointed parts) would say.
            String expectedEtag = multipartEtag(((S3Recoverable) restored).parts());
            String presentEtag = etag(s3, bucket, key);
            String etagCheck = presentEtag == null ? "no object" : presentEtag.equals(expectedEtag) ? "match (accept)" : "mismatch (refuse)";
            boolean afterIsOwn = false;
            if (!after.equals("absent")) {
                afterIsOwn = s3.getObjectAsString(bucket, key).equals(join(own));
            }
            boolean expectAccept = c.equals("original");
            boolean ok = accepted == expectAccept;
            outcome.put(c, accepted ? "accepted" : "threw");
            System.out.printf(
                    "case %s: committed %s (%d bytes written); object %s: now %s; pending uploads at the key: %d; commitAfterRecovery %s; object after: %s, %s; ETag check against %s from the checkpointed parts: %s → %s%n",
                    c, committed, ownBytes.length, change, before, uploads, reaction, after,
                    after.equals("absent") ? "no object" : afterIsOwn ? "Flink's own bytes" : "NOT Flink's bytes", expectedEtag, etagCheck,
                    ok ? "as a correct committer must" : expectAccept ? "WRONG: refused its own object" : "WRONG: took an object it did not write as its commit");
        }
        boolean reproduced = outcome.get("foreign-same-length").equals("accepted");
        System.out.printf(
                "RESULT flink_recommit_length_only reproduced=%s original=%s foreign_same_length=%s foreign_other_length=%s absent=%s controls_as_expected=%s flink=2.2.0 flink_s3_fs_hadoop=2.2.0 minio=%s%n",
                reproduced, outcome.get("original"), outcome.get("foreign-same-length"), outcome.get("foreign-other-length"), outcome.get("absent"),
                controlsAsExpected(outcome), minio);
    }

    /** Whether the control cases (all but foreign-same-length) went the way a correct committer goes. */
    private static boolean controlsAsExpected(Map<String, String> o) {
        return o.get("original").equals("accepted") && o.get("foreign-other-length").equals("threw") && o.get("absent").equals("threw");
    }
}
