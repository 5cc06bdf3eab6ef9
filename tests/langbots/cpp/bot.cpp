// A Kamisado Arena bot in C++17 (g++ -O2 -std=c++17 bot.cpp), written from
// protocol.md: it answers each request and plays a random legal action.
#include <cctype>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

// The arena writes compact JSON with `type` first (protocol.md §1); the fields
// read here hold no escapes, so a scan for them is enough.
static std::string text(const std::string& line, const std::string& key) {
    const std::string mark = "\"" + key + "\":\"";
    const auto at = line.find(mark);
    if (at == std::string::npos) return "";
    const auto from = at + mark.size();
    return line.substr(from, line.find('"', from) - from);
}

static std::string id(const std::string& line) {
    auto at = line.find("\"id\":") + 5;
    auto end = at;
    while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end]))) ++end;
    return line.substr(at, end - at);
}

int main() {
    std::random_device seed;
    std::mt19937 rng(seed());
    std::string line;  // std::getline grows as needed: lines reach max_line
    while (std::getline(std::cin, line)) {
        const std::string type = text(line, "type");
        std::string reply;
        if (type == "hello") {
            reply = "{\"type\":\"identity\",\"id\":" + id(line) +
                    ",\"protocol\":1,\"name\":\"langbot-cpp\",\"author\":\"tests\","
                    "\"version\":\"1\",\"games\":[\"kamisado\"]}";
        } else if (type == "newgame") {
            reply = "{\"type\":\"ready\",\"id\":" + id(line) + "}";
        } else if (type == "ping") {
            reply = "{\"type\":\"pong\",\"id\":" + id(line) + "}";
        } else if (type == "go") {
            const auto from = line.find("\"legal\":[") + 9;
            std::stringstream inside(line.substr(from, line.find(']', from) - from));
            std::vector<std::string> legal;
            for (std::string word; std::getline(inside, word, ',');) legal.push_back(word);
            std::uniform_int_distribution<std::size_t> pick(0, legal.size() - 1);
            reply = "{\"type\":\"action\",\"id\":" + id(line) + ",\"action\":" + legal[pick(rng)] + "}";
        } else if (type == "quit") {
            return 0;
        } else {
            continue;
        }
        std::cout << reply << std::endl;  // endl flushes
    }
    return 0;
}
