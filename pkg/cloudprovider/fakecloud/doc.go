// Package fakecloud is a cloud provider for tests: instances, their
// metadata, existence and shutdown state are set by the test, and every
// call is counted. It is not registered; tests put it in the
// ControllerContext themselves.
package fakecloud
