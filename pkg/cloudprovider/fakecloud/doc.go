// Package fakecloud is a cloud provider for tests: instances, their
// metadata, existence and shutdown state are set by the test and offered
// through InstancesV2 or, after UseInstancesV1, through the older
// Instances and Zones interfaces; routes live in an in-memory table the
// test can seed, read and make fail. Every call is counted. It is not
// registered; tests put it in the ControllerContext themselves.
package fakecloud
