# xxl-admin-go: a drop-in image for xuxueli/xxl-job-admin, configured the same way.
#
#   docker build -t xxl-admin-go .
#   docker run -p 8080:8080 xxl-admin-go        # a trial on the embedded file, kept in the volume
#   docker run -p 8080:8080 -e PARAMS="--spring.datasource.url=jdbc:mysql://db:3306/xxl_job?serverTimezone=Asia/Shanghai \
#       --spring.datasource.username=root --spring.datasource.password=secret" xxl-admin-go
#   docker run --rm -e PARAMS="..." xxl-admin-go schema init     # tables for an empty database
#
# PostgreSQL: --spring.datasource.url=jdbc:postgresql://db:5432/xxl_job?currentSchema=xxl_job&serverTimezone=…
# (a Compose example: docker/README.md).
#
# PARAMS is read by the admin itself; JAVA_OPTS is accepted and ignored (docker/entrypoint.sh).

FROM golang:1.26-alpine AS build
WORKDIR /src
ENV CGO_ENABLED=0
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# timetzdata: serverTimezone zones resolve without tzdata in the final image.
# VERSION and COMMIT are what `xxl-admin-go version` prints (the build context has no
# .git): docker build --build-arg VERSION=v1.2.3 --build-arg COMMIT=$(git rev-parse HEAD) .
ARG VERSION=""
ARG COMMIT=""
RUN go build -trimpath -tags timetzdata \
    -ldflags="-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
    -o /out/xxl-admin-go ./cmd/xxl-admin-go

FROM alpine:3.22
# The working directory belongs to the runtime user: the embedded database
# (./xxl-job.db and its lock file) is created there when no datasource is configured.
RUN adduser -D -H -h /opt/xxl-admin-go -u 10001 xxl \
    && mkdir -p /opt/xxl-admin-go && chown 10001:10001 /opt/xxl-admin-go
COPY --from=build /out/xxl-admin-go /usr/local/bin/xxl-admin-go
COPY docker/entrypoint.sh docker/healthcheck.sh /usr/local/bin/
RUN chmod 0755 /usr/local/bin/entrypoint.sh /usr/local/bin/healthcheck.sh
# An application.properties mounted here is read at start-up; the embedded file lives
# here too, in a volume, so that it outlives the container (docker run -v xxl-data:/opt/xxl-admin-go).
WORKDIR /opt/xxl-admin-go
VOLUME ["/opt/xxl-admin-go"]
USER 10001:10001
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=6s --start-period=20s --retries=3 CMD ["/usr/local/bin/healthcheck.sh"]
ENTRYPOINT ["/usr/local/bin/entrypoint.sh"]
