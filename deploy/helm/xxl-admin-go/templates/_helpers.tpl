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
{{- list .Values.database.password .Values.accessToken .Values.metricsToken .Values.secretKeys | toJson | sha256sum }}
{{- end }}
