//go:build tlc

package modelcheck

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
)

func (v tlaValue) ints() []int {
	var out []int
	for _, e := range v.elem {
		out = append(out, int(e.i))
	}
	sort.Ints(out)
	return out
}

// readDump reads a TLC state dump (-dump FILE writes FILE.dump): blocks of
// "State n:" followed by "/\ var = value" conjuncts.
func readDump(path string) ([]map[string]tlaValue, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var states []map[string]tlaValue
	var cur map[string]tlaValue
	var name string
	var buf strings.Builder
	flush := func() error {
		if name == "" {
			return nil
		}
		v, err := parseTLA(buf.String())
		if err != nil {
			return fmt.Errorf("state %d, %s: %w", len(states), name, err)
		}
		cur[name] = v
		name = ""
		buf.Reset()
		return nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "State ") && strings.HasSuffix(line, ":"):
			if err := flush(); err != nil {
				return nil, err
			}
			cur = map[string]tlaValue{}
			states = append(states, cur)
		case strings.HasPrefix(line, "/\\ "):
			if err := flush(); err != nil {
				return nil, err
			}
			eq := strings.Index(line, " = ")
			if eq < 0 || cur == nil {
				return nil, fmt.Errorf("dump line %q", line)
			}
			name = line[3:eq]
			buf.WriteString(line[eq+3:])
		default:
			if name != "" {
				buf.WriteString(" ")
				buf.WriteString(line)
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return states, sc.Err()
}
