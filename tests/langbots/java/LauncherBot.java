// A Kamisado Arena bot run from its source (`java LauncherBot.java`, the JDK's
// source launcher compiles it in memory at every start), using what the JDK
// reads its configuration for in /etc/java-17-openjdk: UUID.randomUUID() and
// SecureRandom (security providers) and java.util.logging (logging.properties).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.UUID;
import java.util.logging.Logger;

public class LauncherBot {
    private static final Logger LOG = Logger.getLogger("langbot");

    // The arena writes compact JSON with `type` first (protocol.md §1); the
    // fields read here hold no escapes, so a scan for them is enough.
    static String text(String line, String key) {
        String mark = "\"" + key + "\":\"";
        int at = line.indexOf(mark);
        if (at < 0) return "";
        int from = at + mark.length();
        return line.substring(from, line.indexOf('"', from));
    }

    static String id(String line) {
        int at = line.indexOf("\"id\":") + 5;
        int end = at;
        while (end < line.length() && Character.isDigit(line.charAt(end))) end++;
        return line.substring(at, end);
    }

    public static void main(String[] args) throws Exception {
        SecureRandom random = new SecureRandom();
        String session = UUID.randomUUID().toString();
        LOG.info("session " + session);  // to stderr, through the JDK's logging.properties
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String type = text(line, "type");
            String reply = null;
            if (type.equals("hello")) {
                reply = "{\"type\":\"identity\",\"id\":" + id(line) + ",\"protocol\":1,"
                    + "\"name\":\"langbot-java-source\",\"author\":\"tests\",\"version\":\"1\","
                    + "\"games\":[\"kamisado\"]}";
            } else if (type.equals("newgame")) {
                reply = "{\"type\":\"ready\",\"id\":" + id(line) + "}";
            } else if (type.equals("ping")) {
                reply = "{\"type\":\"pong\",\"id\":" + id(line) + "}";
            } else if (type.equals("go")) {
                int from = line.indexOf("\"legal\":[") + 9;
                String[] legal = line.substring(from, line.indexOf(']', from)).split(",");
                String pick = legal[random.nextInt(legal.length)];
                reply = "{\"type\":\"action\",\"id\":" + id(line) + ",\"action\":" + pick + "}";
            } else if (type.equals("quit")) {
                return;
            }
            if (reply != null) {
                System.out.println(reply);
                System.out.flush();
            }
        }
    }
}
