// A Kamisado Arena bot in Go (go build bot.go), written from protocol.md: it
// answers each request and plays a random legal action.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"time"
)

type message struct {
	Type  string   `json:"type"`
	ID    int64    `json:"id"`
	Legal []string `json:"legal"`
}

func main() {
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	send := func(reply map[string]any) {
		line, _ := json.Marshal(reply)
		out.Write(append(line, '\n'))
		out.Flush()
	}
	for {
		line, err := in.ReadBytes('\n') // no length limit: lines reach max_line
		if len(line) > 1 {
			var msg message
			if jerr := json.Unmarshal(line, &msg); jerr != nil {
				fmt.Fprintln(os.Stderr, "not JSON:", jerr)
			} else {
				switch msg.Type {
				case "hello":
					send(map[string]any{"type": "identity", "id": msg.ID, "protocol": 1,
						"name": "langbot-go", "author": "tests", "version": "1",
						"games": []string{"kamisado"}})
				case "newgame":
					send(map[string]any{"type": "ready", "id": msg.ID})
				case "ping":
					send(map[string]any{"type": "pong", "id": msg.ID})
				case "go":
					send(map[string]any{"type": "action", "id": msg.ID,
						"action": msg.Legal[rng.Intn(len(msg.Legal))]})
				case "quit":
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}
