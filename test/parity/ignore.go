package parity

import (
	"errors"
	"fmt"
	"strings"
)

// ignorePath is a parsed Scenario.Ignore entry: "Kind:a.b[c.d].*".
type ignorePath struct {
	kind string // "*" matches every kind
	segs []string
}

// parseIgnore parses "Kind:path". The path is dot-separated keys; [key]
// holds a key with dots; * matches any key. Lists are walked through:
// the rest of the path applies to each element.
func parseIgnore(s string) (ignorePath, error) {
	kind, path, ok := strings.Cut(s, ":")
	if !ok || kind == "" || path == "" {
		return ignorePath{}, fmt.Errorf("%q: want Kind:path (Kind may be *)", s)
	}
	var segs []string
	for path != "" {
		switch {
		case path[0] == '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return ignorePath{}, fmt.Errorf("%q: unclosed [", s)
			}
			segs = append(segs, path[1:end])
			path = path[end+1:]
		case path[0] == '.':
			path = path[1:]
			continue
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			segs = append(segs, path[:end])
			path = path[end:]
		}
		if len(path) > 0 && path[0] != '.' && path[0] != '[' {
			return ignorePath{}, fmt.Errorf("%q: want . or [ after ]", s)
		}
	}
	for _, seg := range segs {
		if seg == "" {
			return ignorePath{}, errors.New(s + ": empty key")
		}
	}
	return ignorePath{kind: kind, segs: segs}, nil
}

// apply drops the path from an object of the given kind.
func (p ignorePath) apply(kind string, obj map[string]any) {
	if p.kind != "*" && p.kind != kind {
		return
	}
	dropPath(obj, p.segs)
}

func dropPath(v any, segs []string) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			dropPath(e, segs)
		}
	case map[string]any:
		seg := segs[0]
		for k, e := range v {
			if seg != "*" && seg != k {
				continue
			}
			if len(segs) == 1 {
				delete(v, k)
			} else {
				dropPath(e, segs[1:])
			}
		}
	}
}
