// A Kamisado Arena bot in plain Java (no libraries), written from protocol.md:
// it answers each request and plays a random legal action. Built and run as a
// course's student would: javac, jar, then `java -jar bot.jar`.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

public class Bot {
    // The arena writes compact JSON with `type` first (protocol.md §1), and the
    // fields read here hold no escapes: a scan for them is enough for this bot.
    static String text(String line, String key) {
        String mark = "\"" + key + "\":\"";
        int at = line.indexOf(mark);
        if (at < 0) return "";
        int from = at + mark.length();
        return line.substring(from, line.indexOf('"', from));
    }

    static long number(String line, String key) {
        String mark = "\"" + key + "\":";
        int at = line.indexOf(mark) + mark.length();
        int end = at;
        while (end < line.length() && Character.isDigit(line.charAt(end))) end++;
        return Long.parseLong(line.substring(at, end));
    }

    static List<String> legal(String line) {
        String mark = "\"legal\":[";
        int from = line.indexOf(mark) + mark.length();
        String inside = line.substring(from, line.indexOf(']', from));
        List<String> out = new ArrayList<>();
        for (String word : inside.split(",")) out.add(word.substring(1, word.length() - 1));
        return out;
    }

    public static void main(String[] args) throws Exception {
        Random random = new Random();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            String type = text(line, "type");
            String reply = null;
            switch (type) {
                case "hello":
                    reply = "{\"type\":\"identity\",\"id\":" + number(line, "id")
                        + ",\"protocol\":1,\"name\":\"langbot-java-jar\",\"author\":\"tests\","
                        + "\"version\":\"1\",\"games\":[\"kamisado\"]}";
                    break;
                case "newgame":
                    reply = "{\"type\":\"ready\",\"id\":" + number(line, "id") + "}";
                    break;
                case "ping":
                    reply = "{\"type\":\"pong\",\"id\":" + number(line, "id") + "}";
                    break;
                case "go":
                    List<String> moves = legal(line);
                    reply = "{\"type\":\"action\",\"id\":" + number(line, "id") + ",\"action\":\""
                        + moves.get(random.nextInt(moves.size())) + "\"}";
                    break;
                case "quit":
                    return;
                default:
                    break;
            }
            if (reply != null) {
                System.out.println(reply);
                System.out.flush();
            }
        }
    }
}
