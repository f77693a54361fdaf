package ttl

import (
	"math"
	"sync"
)

// boundary is one step of upstream's table: the TTL applies while the node
// count stays within [sizeMin, sizeMax].
type boundary struct {
	sizeMin, sizeMax int
	ttlSeconds       int
}

// boundaries is upstream's table, verbatim.
var boundaries = []boundary{
	{sizeMin: 0, sizeMax: 100, ttlSeconds: 0},
	{sizeMin: 90, sizeMax: 500, ttlSeconds: 15},
	{sizeMin: 450, sizeMax: 1000, ttlSeconds: 30},
	{sizeMin: 900, sizeMax: 2000, ttlSeconds: 60},
	{sizeMin: 1800, sizeMax: math.MaxInt32, ttlSeconds: 300},
}

// sizer counts nodes and tracks the table step with hysteresis. It is safe
// for concurrent use.
type sizer struct {
	mu    sync.RWMutex
	count int
	step  int
}

// add counts one more node and reports whether the desired TTL changed.
func (s *sizer) add() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	if s.step < len(boundaries)-1 && s.count > boundaries[s.step].sizeMax {
		s.step++
		return true
	}
	return false
}

// remove counts one node less and reports whether the desired TTL changed.
func (s *sizer) remove() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count--
	if s.step > 0 && s.count < boundaries[s.step].sizeMin {
		s.step--
		return true
	}
	return false
}

// ttlSeconds is the TTL nodes should carry now.
func (s *sizer) ttlSeconds() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return boundaries[s.step].ttlSeconds
}
