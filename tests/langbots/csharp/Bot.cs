// A Kamisado Arena bot in C# for Mono (mcs Bot.cs; mono Bot.exe), written from
// protocol.md. new Random() and string.Format("{0:F2}", x) load Mono's native
// helpers through its configuration in /etc/mono.
using System;
using System.Text;

public static class Bot
{
    // The arena writes compact JSON with `type` first (protocol.md §1); the
    // fields read here hold no escapes, so a scan for them is enough.
    static string Text(string line, string key)
    {
        string mark = "\"" + key + "\":\"";
        int at = line.IndexOf(mark, StringComparison.Ordinal);
        if (at < 0) return "";
        int from = at + mark.Length;
        return line.Substring(from, line.IndexOf('"', from) - from);
    }

    static string Id(string line)
    {
        int at = line.IndexOf("\"id\":", StringComparison.Ordinal) + 5;
        int end = at;
        while (end < line.Length && char.IsDigit(line[end])) end++;
        return line.Substring(at, end - at);
    }

    public static int Main()
    {
        var random = new Random();
        Console.Error.WriteLine(string.Format("started; a number {0:F2}", random.NextDouble()));
        var stdout = new System.IO.StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false));
        string line;
        while ((line = Console.In.ReadLine()) != null)
        {
            string type = Text(line, "type");
            string reply = null;
            switch (type)
            {
                case "hello":
                    reply = "{\"type\":\"identity\",\"id\":" + Id(line) + ",\"protocol\":1,"
                        + "\"name\":\"langbot-csharp\",\"author\":\"tests\",\"version\":\"1\","
                        + "\"games\":[\"kamisado\"]}";
                    break;
                case "newgame":
                    reply = "{\"type\":\"ready\",\"id\":" + Id(line) + "}";
                    break;
                case "ping":
                    reply = "{\"type\":\"pong\",\"id\":" + Id(line) + "}";
                    break;
                case "go":
                    int from = line.IndexOf("\"legal\":[", StringComparison.Ordinal) + 9;
                    string[] legal = line.Substring(from, line.IndexOf(']', from) - from).Split(',');
                    reply = "{\"type\":\"action\",\"id\":" + Id(line) + ",\"action\":"
                        + legal[random.Next(legal.Length)] + "}";
                    break;
                case "quit":
                    return 0;
            }
            if (reply != null)
            {
                stdout.Write(reply + "\n");
                stdout.Flush();
            }
        }
        return 0;
    }
}
