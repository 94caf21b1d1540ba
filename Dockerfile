# syntax=docker/dockerfile:1
# vitals's image, for those who build with Docker, from a clone (git clone: the build stage reads
# its .git, which a work tree of git worktree add only points to):
#
#   docker build -t ghcr.io/vitals-dev/vitals:dev .
#   docker buildx build --platform linux/amd64,linux/arm64 -t ghcr.io/vitals-dev/vitals:dev .
#
# It is the image that hack/image.sh builds without a daemon (docs/image.md). The build stage runs
# hack/image.sh --rootfs in the clone as it is sent, .git included: its /vitals is built as
# hack/image.sh builds it, of hack/version.sh's version, with the commit in its build information
# (vitals version says both). The final stage is those files and the same configuration.
# hack/image/image_test.go runs the build stage's line outside a container and builds the final
# stage with podman, and compares both with hack/image.sh's. The labels that depend on the build
# come from --build-arg VERSION, REVISION and CREATED (empty without them; hack/image.sh takes them
# from git):
#
#   docker build --build-arg VERSION="$(bash hack/version.sh)" \
#     --build-arg REVISION="$(git rev-parse HEAD)" \
#     --build-arg CREATED="$(date -u -d @"$(git log -1 --format=%ct)" +%Y-%m-%dT%H:%M:%SZ)" \
#     -t ghcr.io/vitals-dev/vitals:dev .

# The build stage cross-compiles on the builder's own platform; golang's image holds git and
# Debian's ca-certificates, whose bundle goes into the image.
FROM --platform=$BUILDPLATFORM golang:1.26-trixie AS build
ARG TARGETOS
ARG TARGETARCH
# VERSION, when given, is /vitals's version too, in place of hack/version.sh's.
ARG VERSION
WORKDIR /src
COPY . .
# The caches are golang's image's: GOMODCACHE is /go/pkg/mod (its GOPATH is /go), GOCACHE root's
# /root/.cache/go-build. git refuses a repository that another user owns (safe.directory), and
# then hack/version.sh and go build's stamp of the commit would fail: this container trusts it.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*' \
    PLATFORM="${TARGETOS:-linux}/${TARGETARCH:-amd64}" bash hack/image.sh --rootfs /rootfs

FROM scratch
COPY --from=build /rootfs/ /
USER 65532:65532
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ENTRYPOINT ["/vitals"]
CMD ["run", "-c", "/etc/vitals/vitals.yaml"]
ARG VERSION
ARG REVISION
ARG CREATED
LABEL org.opencontainers.image.title="vitals" \
      org.opencontainers.image.description="Startup, liveness and readiness checks that mean what they say: the vitals agent and CLI" \
      org.opencontainers.image.url="https://github.com/vitals-dev/vitals" \
      org.opencontainers.image.source="https://github.com/vitals-dev/vitals" \
      org.opencontainers.image.documentation="https://github.com/vitals-dev/vitals/blob/main/docs/image.md" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.revision="$REVISION" \
      org.opencontainers.image.created="$CREATED"
