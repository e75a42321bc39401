{{/* Names and labels, as `helm create` makes them. */}}
{{- define "xxl-admin-go.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "xxl-admin-go.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "xxl-admin-go.selectorLabels" -}}
app.kubernetes.io/name: {{ include "xxl-admin-go.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "xxl-admin-go.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "xxl-admin-go.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The Secret the pods read: the user's, or the chart's own. */}}
{{- define "xxl-admin-go.secretName" -}}
{{- default (include "xxl-admin-go.fullname" .) .Values.existingSecret }}
{{- end }}

{{/* The context path as a URL prefix: "" for the root, else "/path". */}}
{{- define "xxl-admin-go.pathPrefix" -}}
{{- $p := trimSuffix "/" .Values.contextPath }}
{{- if and $p (not (hasPrefix "/" $p)) }}{{ $p = printf "/%s" $p }}{{ end }}
{{- $p }}
{{- end }}

{{/* Seconds Kubernetes waits for a pod to stop: the preStop sleep, the admin's
shutdown timeout and a margin, unless set. */}}
{{- define "xxl-admin-go.gracePeriod" -}}
{{- if .Values.terminationGracePeriodSeconds }}
{{- .Values.terminationGracePeriodSeconds }}
{{- else }}
{{- add (int .Values.preStopSleepSeconds) (div (add (int .Values.shutdownTimeout) 999) 1000) 5 }}
{{- end }}
{{- end }}

{{/* Refuses values that cannot work, before anything is rendered. */}}
{{- define "xxl-admin-go.validate" -}}
{{- if and (not .Values.database.url) (gt (int .Values.replicaCount) 1) }}
{{- fail (printf "the embedded database (database.url empty) is one admin's file: replicaCount must be 1, not %d; set database.url to a MySQL/MariaDB or PostgreSQL database to run several" (int .Values.replicaCount)) }}
{{- end }}
{{- if not (has .Values.cluster.mode (list "partitioned" "lock")) }}
{{- fail (printf "cluster.mode must be partitioned or lock, not %q" .Values.cluster.mode) }}
{{- end }}
{{- range $key, $_ := .Values.config }}
{{- if eq ($key | lower | replace "-" "" | replace "_" "") "xxl.admin.requireaccesstoken" }}
{{- fail (printf "config.%s: the chart sets it (the admin never runs on the public default_token)" $key) }}
{{- else if regexMatch "(password|secret|token)$|^xxl\\.admin\\.alarm\\.webhook\\..+\\.url$" ($key | lower | replace "-" "" | replace "_" "") }}
{{- fail (printf "config.%s is a secret setting: the arguments are readable in the pod's spec; put it under secretConfig (a Secret, read as an environment variable)" $key) }}
{{- end }}
{{- end }}
{{- range $key, $_ := .Values.secretConfig }}
{{- if not (regexMatch "^[A-Za-z0-9._-]+$" $key) }}
{{- fail (printf "secretConfig: %q is no configuration key" $key) }}
{{- end }}
{{- if and (hasPrefix "xxl.admin.alarm.webhook." ($key | lower)) (contains "-" (trimPrefix "xxl.admin.alarm.webhook." ($key | lower))) }}
{{- fail (printf "secretConfig.%s: an alarm channel read from the environment needs a name without '-'" $key) }}
{{- end }}
{{- $env := include "xxl-admin-go.envName" $key }}
{{- if has $env (list "XXL_JOB_ACCESSTOKEN" "XXL_ADMIN_METRICS_TOKEN" "SPRING_DATASOURCE_PASSWORD") }}
{{- fail (printf "secretConfig.%s: set it with accessToken, metricsToken or database.password" $key) }}
{{- end }}
{{- end }}
{{- if .Values.existingSecret }}
{{- /* Where the cluster answers (install, upgrade; not `helm template`): the tokens are there. */}}
{{- $user := (lookup "v1" "Secret" .Release.Namespace .Values.existingSecret).data }}
{{- if $user }}
{{- range $key := concat (list .Values.secretKeys.accessToken .Values.secretKeys.metricsToken) (keys .Values.secretConfig | sortAlpha) }}
{{- if not (hasKey $user $key) }}
{{- fail (printf "existingSecret %s has no key %s: the pod would not start (the tokens are required; docs/KUBERNETES.md, \"Tokens\")" $.Values.existingSecret $key) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- if and .Values.database.url (not (or (hasPrefix "jdbc:mysql:" .Values.database.url) (hasPrefix "jdbc:mariadb:" .Values.database.url) (hasPrefix "jdbc:postgresql:" .Values.database.url))) }}
{{- fail (printf "database.url must be a jdbc:mysql:, jdbc:mariadb: or jdbc:postgresql: URL, not %q" .Values.database.url) }}
{{- end }}
{{- end }}

{{/* A token of the chart's Secret, base64-encoded: the value given; else the one the
release's Secret already holds (so that a generated token survives upgrades); else 40
random characters. (`helm template` has no cluster: it generates a new one each time.) */}}
{{- define "xxl-admin-go.secretValue" -}}
{{- $given := index . 0 }}
{{- $existing := index . 1 }}
{{- $key := index . 2 }}
{{- if $given }}
{{- $given | toString | b64enc }}
{{- else if index $existing $key }}
{{- index $existing $key }}
{{- else }}
{{- randAlphaNum 40 | b64enc }}
{{- end }}
{{- end }}

{{/* What rolls the admins when it changes: the values that go into the chart's
Secret (a generated token is kept, so it does not). */}}
{{- define "xxl-admin-go.secretChecksum" -}}
{{- list .Values.database.password .Values.accessToken .Values.metricsToken .Values.secretKeys .Values.secretConfig | toJson | sha256sum }}
{{- end }}

{{/* The admin's arguments, a JSON array of strings (the template quotes each). */}}
{{- define "xxl-admin-go.args" -}}
{{- $prefix := include "xxl-admin-go.pathPrefix" . }}
{{- $args := list "--server.port=8080" (printf "--server.servlet.context-path=%s" (default "/" $prefix)) (printf "--xxl.admin.shutdown-timeout=%d" (int .Values.shutdownTimeout)) "--xxl.admin.require-access-token=true" }}
{{- if .Values.database.url }}
{{- $args = concat $args (list (printf "--spring.datasource.url=%s" .Values.database.url) (printf "--spring.datasource.username=%v" .Values.database.username) (printf "--xxl.admin.cluster.mode=%s" .Values.cluster.mode) (printf "--xxl.admin.cluster.partitions=%d" (int .Values.cluster.partitions)) (printf "--xxl.admin.cluster.lease-time=%d" (int .Values.cluster.leaseTime))) }}
{{- else }}
{{- $args = append $args (printf "--xxl.admin.embedded.path=%s" .Values.embedded.path) }}
{{- end }}
{{- with .Values.managementPort }}
{{- $args = append $args (printf "--management.server.port=%d" (int .)) }}
{{- end }}
{{- range $key, $value := .Values.config }}
{{- $v := $value }}
{{- /* A whole number from a values file is a float: 1000000, not 1e+06. */}}
{{- if and (kindIs "float64" $v) (eq $v (float64 (int64 $v))) }}{{ $v = int64 $v }}{{ end }}
{{- $args = append $args (printf "--%s=%v" $key $v) }}
{{- end }}
{{- toJson $args }}
{{- end }}

{{/* The environment variable the admin binds to a configuration key: dots become
'_', dashes go, upper case (compat/config; alarm channels: XXL_ADMIN_ALARM_WEBHOOK_<NAME>_<FIELD>). */}}
{{- define "xxl-admin-go.envName" -}}
{{- . | replace "-" "" | replace "." "_" | upper }}
{{- end }}
