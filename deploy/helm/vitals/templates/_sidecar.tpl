{{/*
vitals.sidecar renders the vitals agent as a container beside a workload of your own chart,
checking it over localhost and serving /livez, /readyz and /startupz. It takes a dict:

  image      the vitals image, e.g. ghcr.io/vitals-dev/vitals:v0.1.0 (required)
  config     the ConfigMap that holds vitals.yaml (required); vitals.sidecar.volumes mounts it
  native     true (the default): a native sidecar, to list under initContainers: it has
             restartPolicy: Always, starts before the workload's containers and runs beside them
             for the pod's life (Kubernetes 1.29 and later). false: a classic sidecar, to list
             under containers, started with the workload's containers in no order.
  port       where vitals listens, as vitals.yaml's listen: says (8558 by default)
  name       the container's name (vitals by default)
  resources  the container's resources (requests and limits that fit a few dozen checks)
  env        more environment variables, a list as a container's env: is
  pullPolicy the image's pull policy (IfNotPresent by default)

  initContainers:
  {{- include "vitals.sidecar" (dict "image" .Values.vitals.image "config" "my-app-vitals") | nindent 8 }}
  ...
  volumes:
  {{- include "vitals.sidecar.volumes" (dict "config" "my-app-vitals") | nindent 8 }}

The probes, as deploy/examples/sidecar.yaml has them: the pod's readiness is the sidecar's
readinessProbe on /readyz; the workload's livenessProbe asks localhost:PORT/livez; vitals's own
liveness is its probe on /startupz, which passes while vitals answers, whatever the workload does,
so long as the sidecar's vitals.yaml has no startup check. The native form's startupProbe on
/startupz holds the workload's containers until vitals answers, so that their first livenessProbe
on vitals does not meet a closed port.
*/}}
{{- define "vitals.sidecar" -}}
{{- $name := .name | default "vitals" }}
{{- $port := .port | default 8558 | int }}
{{- $native := true }}
{{- if hasKey . "native" }}{{ $native = (include "vitals.bool" .native | eq "true") }}{{ end -}}
- name: {{ $name }}
  image: {{ required "vitals.sidecar: image is required, e.g. ghcr.io/vitals-dev/vitals:v0.1.0" .image | quote }}
  imagePullPolicy: {{ .pullPolicy | default "IfNotPresent" }}
  {{- if $native }}
  restartPolicy: Always   # a native sidecar
  {{- end }}
  args: [run, -c, /etc/vitals/vitals.yaml]   # the image's entrypoint is /vitals
  {{- with .env }}
  env:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  ports:
  - name: vitals
    containerPort: {{ $port }}
  {{- if $native }}
  startupProbe:
    httpGet: {path: /startupz, port: vitals}
    periodSeconds: 1
    failureThreshold: 30
  {{- end }}
  readinessProbe:
    httpGet: {path: /readyz, port: vitals}
    periodSeconds: 2
  livenessProbe:
    httpGet: {path: /startupz, port: vitals}
  resources:
    {{- toYaml (.resources | default (dict "requests" (dict "cpu" "10m" "memory" "16Mi") "limits" (dict "cpu" "200m" "memory" "64Mi"))) | nindent 4 }}
  securityContext:   # the restricted Pod Security standard, whatever the pod says
    allowPrivilegeEscalation: false
    capabilities: {drop: [ALL]}
    readOnlyRootFilesystem: true
    runAsNonRoot: true
    seccompProfile: {type: RuntimeDefault}
  volumeMounts:
  - {name: {{ $name }}-config, mountPath: /etc/vitals, readOnly: true}
  - {name: {{ $name }}-tmp, mountPath: /tmp}   # the management socket, /tmp/vitals-UID/
{{- end }}

{{/*
vitals.sidecar.volumes renders the volumes vitals.sidecar mounts, for the pod's volumes: the
ConfigMap config (required) and an emptyDir for the management socket. name is the sidecar's, as
given to vitals.sidecar (vitals by default).
*/}}
{{- define "vitals.sidecar.volumes" -}}
{{- $name := .name | default "vitals" -}}
- name: {{ $name }}-config
  configMap: {name: {{ required "vitals.sidecar.volumes: config, the ConfigMap of vitals.yaml, is required" .config | quote }}}
- name: {{ $name }}-tmp
  emptyDir: {}
{{- end }}

{{/* vitals.bool is "true" or "false" of a boolean, or of a string that says one ("false" is false). */}}
{{- define "vitals.bool" -}}
{{- if kindIs "string" . }}{{ ne (lower .) "false" }}{{ else }}{{ ternary "true" "false" (eq . true) }}{{ end -}}
{{- end }}
