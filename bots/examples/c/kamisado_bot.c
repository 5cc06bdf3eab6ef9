/*
 * kamisado_bot.c - an example Kamisado Arena bot in C99, one file, libc only.
 *
 * It plays a move onto the opponent's home row (rank 8 for player 0, Black;
 * rank 1 for player 1, Gold) when one is legal, otherwise a random legal
 * action (the regroup choices "left"/"right" included). It does not implement
 * the rules: the arena's "legal" list is the truth.
 *
 * The JSON reader below is minimal but walks the real structure of each
 * message: it reads the top-level object key by key, decodes the strings it
 * needs ("type", "position", the "legal" array) with their escapes, reads the
 * integers "id" and "player", and skips every other value (nested objects,
 * arrays and strings containing braces included). Lines may be as long as the
 * arena's max_line (1 MiB by default): the line buffer grows as needed.
 *
 * Build: cc -std=c99 -O2 -o kamisado_bot kamisado_bot.c
 * Run:   ./kamisado_bot [--seed N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ line input */

static char *line_buf = NULL;
static size_t line_cap = 0;

/* Read one line (without its newline) into line_buf; 0 at end of input. */
static int read_line(FILE *in) {
    size_t len = 0;
    int c;
    if (line_cap == 0) {
        line_cap = 1 << 16;
        line_buf = malloc(line_cap);
        if (!line_buf) return 0;
    }
    while ((c = fgetc(in)) != EOF) {
        if (c == '\n') break;
        if (len + 1 >= line_cap) {
            size_t cap = line_cap * 2;
            char *grown = realloc(line_buf, cap);
            if (!grown) return 0;
            line_buf = grown;
            line_cap = cap;
        }
        line_buf[len++] = (char)c;
    }
    if (c == EOF && len == 0) return 0;
    if (len > 0 && line_buf[len - 1] == '\r') len--;
    line_buf[len] = '\0';
    return 1;
}

/* ------------------------------------------------------------ minimal JSON */

#define MAX_LEGAL 4096

typedef struct {
    char *type;           /* decoded, points into the line buffer; NULL if absent */
    char *position;
    long id;              /* -1 if absent */
    long player;          /* -1 if absent */
    char *legal[MAX_LEGAL];
    int n_legal;
} Message;

static void skip_ws(char **p) {
    while (**p == ' ' || **p == '\t' || **p == '\r' || **p == '\n') (*p)++;
}

/* Decode the JSON string at *p (which points at its opening quote) in place.
 * Returns the start of the decoded, NUL-terminated text, or NULL on error. */
static char *parse_string(char **p) {
    char *src = *p, *dst, *start;
    if (*src != '"') return NULL;
    src++;
    start = dst = src;
    while (*src && *src != '"') {
        if (*src == '\\') {
            src++;
            switch (*src) {
            case '"': *dst++ = '"'; break;
            case '\\': *dst++ = '\\'; break;
            case '/': *dst++ = '/'; break;
            case 'b': *dst++ = '\b'; break;
            case 'f': *dst++ = '\f'; break;
            case 'n': *dst++ = '\n'; break;
            case 'r': *dst++ = '\r'; break;
            case 't': *dst++ = '\t'; break;
            case 'u': {
                unsigned v = 0;
                int i;
                for (i = 1; i <= 4; i++) {
                    char h = src[i];
                    v <<= 4;
                    if (h >= '0' && h <= '9') v |= (unsigned)(h - '0');
                    else if (h >= 'a' && h <= 'f') v |= (unsigned)(h - 'a' + 10);
                    else if (h >= 'A' && h <= 'F') v |= (unsigned)(h - 'A' + 10);
                    else return NULL;
                }
                *dst++ = v < 0x80 ? (char)v : '?'; /* actions are ASCII */
                src += 4;
                break;
            }
            default: return NULL;
            }
            src++;
        } else {
            *dst++ = *src++;
        }
    }
    if (*src != '"') return NULL;
    /* The closing quote is at or after dst: terminate there, continue after it. */
    *p = src + 1;
    *dst = '\0';
    return start;
}

/* Skip any JSON value (string, number, literal, object, array). 0 on error. */
static int skip_value(char **p) {
    int depth = 0;
    skip_ws(p);
    do {
        char c = **p;
        if (c == '\0') return 0;
        if (c == '"') {
            (*p)++;
            while (**p && **p != '"') {
                if (**p == '\\' && (*p)[1]) (*p)++;
                (*p)++;
            }
            if (**p != '"') return 0;
            (*p)++;
        } else if (c == '{' || c == '[') {
            depth++;
            (*p)++;
        } else if (c == '}' || c == ']') {
            if (depth == 0) return 1; /* end of the enclosing container */
            depth--;
            (*p)++;
        } else if (c == ',' && depth == 0) {
            return 1;
        } else {
            (*p)++;
        }
    } while (depth > 0 || (**p != ',' && **p != '}' && **p != ']' && **p != '\0'));
    return 1;
}

static int parse_legal(char **p, Message *msg) {
    if (**p != '[') return 0;
    (*p)++;
    skip_ws(p);
    if (**p == ']') {
        (*p)++;
        return 1;
    }
    for (;;) {
        char *s;
        skip_ws(p);
        s = parse_string(p);
        if (!s) return 0;
        if (msg->n_legal < MAX_LEGAL) msg->legal[msg->n_legal++] = s;
        skip_ws(p);
        if (**p == ',') {
            (*p)++;
            continue;
        }
        if (**p == ']') {
            (*p)++;
            return 1;
        }
        return 0;
    }
}

/* Parse a top-level object; 1 on success. Strings are decoded in place. */
static int parse_message(char *text, Message *msg) {
    char *p = text;
    memset(msg, 0, sizeof *msg);
    msg->id = -1;
    msg->player = -1;
    skip_ws(&p);
    if (*p != '{') return 0;
    p++;
    skip_ws(&p);
    if (*p == '}') return 1;
    for (;;) {
        char *key;
        skip_ws(&p);
        key = parse_string(&p);
        if (!key) return 0;
        skip_ws(&p);
        if (*p != ':') return 0;
        p++;
        skip_ws(&p);
        if (strcmp(key, "type") == 0) {
            if (!(msg->type = parse_string(&p))) return 0;
        } else if (strcmp(key, "position") == 0) {
            if (!(msg->position = parse_string(&p))) return 0;
        } else if (strcmp(key, "id") == 0 || strcmp(key, "player") == 0) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p) return 0;
            p = end;
            if (key[0] == 'i') msg->id = v;
            else msg->player = v;
            if (!skip_value(&p)) return 0; /* e.g. a fraction part */
        } else if (strcmp(key, "legal") == 0) {
            if (!parse_legal(&p, msg)) return 0;
        } else {
            if (!skip_value(&p)) return 0;
        }
        skip_ws(&p);
        if (*p == ',') {
            p++;
            continue;
        }
        return *p == '}';
    }
}

/* ------------------------------------------------------------ the bot */

static unsigned long long rng_state = 88172645463325252ULL;

static unsigned long long next_random(void) { /* xorshift64 */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* "c1-c5" wins when its destination is on the opponent's home row. */
static int is_winning(const char *action, long player) {
    if (strlen(action) != 5 || action[2] != '-') return 0;
    return action[4] == (player == 0 ? '8' : '1');
}

static const char *choose(const Message *msg) {
    int wins[MAX_LEGAL];
    int n_wins = 0, i;
    for (i = 0; i < msg->n_legal; i++)
        if (is_winning(msg->legal[i], msg->player)) wins[n_wins++] = i;
    if (n_wins > 0) return msg->legal[wins[next_random() % (unsigned)n_wins]];
    return msg->legal[next_random() % (unsigned)msg->n_legal];
}

/* Write s as a JSON string (actions are plain ASCII, but escape to be safe). */
static void put_json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

int main(int argc, char **argv) {
    Message *msg = malloc(sizeof *msg);
    int i;
    if (!msg) return 1;
    rng_state ^= (unsigned long long)time(NULL);
    for (i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--seed") == 0)
            rng_state = 0x9E3779B97F4A7C15ULL ^ (unsigned long long)strtoull(argv[i + 1], NULL, 10);
    if (rng_state == 0) rng_state = 1;
    setvbuf(stdout, NULL, _IOLBF, 0); /* flush at every newline */

    while (read_line(stdin)) {
        if (line_buf[strspn(line_buf, " \t")] == '\0') continue;
        if (!parse_message(line_buf, msg) || !msg->type) {
            fprintf(stderr, "example-c: ignoring an unreadable line\n");
            continue;
        }
        if (strcmp(msg->type, "hello") == 0) {
            printf("{\"type\":\"identity\",\"id\":%ld,\"protocol\":1,\"name\":\"example-c\","
                   "\"author\":\"Kamisado Arena\",\"version\":\"1\",\"games\":[\"kamisado\"]}\n",
                   msg->id);
        } else if (strcmp(msg->type, "newgame") == 0) {
            printf("{\"type\":\"ready\",\"id\":%ld}\n", msg->id);
        } else if (strcmp(msg->type, "ping") == 0) {
            printf("{\"type\":\"pong\",\"id\":%ld}\n", msg->id);
        } else if (strcmp(msg->type, "go") == 0) {
            if (msg->n_legal == 0) {
                fprintf(stderr, "example-c: a go without legal actions\n");
                return 1;
            }
            printf("{\"type\":\"action\",\"id\":%ld,\"action\":", msg->id);
            put_json_string(choose(msg));
            printf("}\n");
        } else if (strcmp(msg->type, "quit") == 0) {
            return 0;
        } /* gameover and unknown types: no answer */
        fflush(stdout);
    }
    return 0;
}
