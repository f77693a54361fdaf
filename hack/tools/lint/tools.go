//go:build tools

// Package tools pins staticcheck (honnef.co/go/tools/cmd/staticcheck), which
// hack/verify.sh runs over the repository, so that `go mod tidy` records its
// module. Nothing here is product code; see hack/tools/build.sh.
package tools

import _ "honnef.co/go/tools/cmd/staticcheck"
