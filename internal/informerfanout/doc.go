// Package informerfanout delivers a shared informer's events to all the
// event handlers registered before it starts through one client-go
// listener, instead of one listener per handler.
//
// client-go gives every handler of a shared informer its own listener: two
// goroutines and a buffer, so that each Pod event is handed from goroutine
// to goroutine twice for every one of the twenty or so controllers that
// watch Pods, about forty wake-ups per event. Upstream's controller manager
// pays that on every Pod and Node change. kcm's handlers only enqueue keys
// (the data path in docs/ARCHITECTURE.md), so calling them one after
// another on a single listener costs less than handing each event to each
// of them. The price: a handler that blocks holds back the others on its
// listener, where with client-go it would hold back only itself.
//
// Handlers registered before the factory's Start share a listener with the
// others that asked for the same resync period (most ask for the
// informer's default or for none), so each still gets resync events
// exactly when it would have with client-go. One registered later gets a
// listener of its own, as with client-go: a shared listener cannot replay
// the informer's cache to a late handler without racing the events it
// delivers.
package informerfanout
