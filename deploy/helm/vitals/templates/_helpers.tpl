{{/* The chart's name, or nameOverride. */}}
{{- define "vitals.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name, at most 63 characters (a DNS label): the name of every object. */}}
{{- define "vitals.fullname" -}}
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

{{/* The labels that select the fleet's pods; they never change for a release. */}}
{{- define "vitals.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vitals.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: fleet
{{- end }}

{{- define "vitals.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "vitals.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "vitals.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "vitals.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* vitals fleet's command line, made of .Values.fleet. */}}
{{- define "vitals.fleetArgs" -}}
{{- $args := list "fleet" "--listen" (printf ":%d" (int .Values.fleet.port)) }}
{{- if eq .Values.fleet.scope "cluster" }}
{{- $args = append $args "-A" }}
{{- else }}
{{- $args = concat $args (list "-n" .Release.Namespace) }}
{{- end }}
{{- with .Values.fleet.selector }}
{{- $args = concat $args (list "-l" .) }}
{{- end }}
{{- $args = concat $args (list "--condition" .Values.fleet.condition) }}
{{- if ne .Values.fleet.details "local" }}
{{- $args = concat $args (list "--details" .Values.fleet.details) }}
{{- end }}
{{- range include "vitals.fleetSecrets" . | fromJsonArray }}
{{- $dir := .dir }}
{{- range .items }}
{{- $args = concat $args (list .flag (printf "%s/%s" $dir .path)) }}
{{- end }}
{{- end }}
{{- concat $args .Values.fleet.extraArgs | toJson }}
{{- end }}

{{/*
vitals.fleetSecrets is the Secrets of .Values.fleet's token and TLS, as a JSON list: each is a
volume mounted read-only at dir, its keys projected to files there, each passed as flag. The
volumes, the mounts and the command line are all made of it. A projected file, unlike a subPath
mount, is renewed in place when its Secret changes, and vitals fleet reads it again.
*/}}
{{- define "vitals.fleetSecrets" -}}
{{- $fleet := .Values.fleet }}
{{- $secrets := list }}
{{- with $fleet.auth.tokenSecret.name }}
{{- $secrets = append $secrets (dict "volume" "fleet-token" "secret" . "dir" "/etc/vitals/fleet/token"
      "items" (list (dict "key" $fleet.auth.tokenSecret.key "path" "token" "flag" "--token-file"))) }}
{{- end }}
{{- with $fleet.tls.secretName }}
{{- $secrets = append $secrets (dict "volume" "fleet-tls" "secret" . "dir" "/etc/vitals/fleet/tls"
      "items" (list (dict "key" "tls.crt" "path" "tls.crt" "flag" "--tls-cert") (dict "key" "tls.key" "path" "tls.key" "flag" "--tls-key"))) }}
{{- end }}
{{- with $fleet.tls.clientCA.secretName }}
{{- if not $fleet.tls.secretName }}
{{- fail "fleet.tls.clientCA needs fleet.tls.secretName: client certificates are asked for over TLS (vitals fleet's --client-ca needs --tls-cert)" }}
{{- end }}
{{- $secrets = append $secrets (dict "volume" "fleet-client-ca" "secret" . "dir" "/etc/vitals/fleet/client-ca"
      "items" (list (dict "key" $fleet.tls.clientCA.key "path" "ca.crt" "flag" "--client-ca"))) }}
{{- end }}
{{- toJson $secrets }}
{{- end }}

{{/*
vitals.fleetProbe is a probe of the values (.probe) as the fleet's container has it: over TLS
(.https), an httpGet without a scheme of its own is given HTTPS, as the page is served.
*/}}
{{- define "vitals.fleetProbe" -}}
{{- $probe := deepCopy .probe }}
{{- if and .https (kindIs "map" $probe.httpGet) }}
{{- $_ := set $probe.httpGet "scheme" ($probe.httpGet.scheme | default "HTTPS") }}
{{- end }}
{{- toYaml $probe }}
{{- end }}
