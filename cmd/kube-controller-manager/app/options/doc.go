// Package options defines every command-line flag of kube-controller-manager
// with upstream v1.37's names, types, defaults and help sections, validates
// them, and turns them into a Config.
package options
