// Package controller holds machinery every controller shares: the worker
// loop over a rate-limited workqueue, event recorders, and key helpers.
// Nothing here decides anything about a resource; that is the controllers'.
package controller
