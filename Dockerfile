# kcm's kube-controller-manager image: a static binary on a minimal,
# non-root base. Build: docker build -t kcm/kube-controller-manager:dev .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd cmd
COPY pkg pkg
COPY internal internal
ARG KUBE_VERSION=v1.37.1
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=${KUBE_VERSION}-kcm -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37" \
      -o /out/kube-controller-manager ./cmd/kube-controller-manager

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kube-controller-manager /usr/local/bin/kube-controller-manager
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kube-controller-manager"]
