package resourcepoolstatusrequest

import (
	"encoding/json"
)

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func equalJSON(a, b any) bool { return toJSON(a) == toJSON(b) }
