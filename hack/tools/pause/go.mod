module github.com/kcm-dev/kcm/hack/tools/pause

go 1.26.0
