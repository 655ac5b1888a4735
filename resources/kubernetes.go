package resources

import (
	"os"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/semconv"
)

// DefaultKubernetesSecretsPath is the directory whose existence marks a
// Kubernetes pod. Detection only checks that it exists; it never reads it
// (in particular never the service-account token).
const DefaultKubernetesSecretsPath = "/var/run/secrets/kubernetes.io"

const (
	envKubernetesServiceHost = "KUBERNETES_SERVICE_HOST"
	envK8sNamespace          = "K8S_NAMESPACE"
	envK8sPodName            = "K8S_POD_NAME"
	envHostname              = "HOSTNAME"
	envK8sPodUID             = "K8S_POD_UID"
	envK8sNodeName           = "K8S_NODE_NAME"
	envK8sContainerName      = "K8S_CONTAINER_NAME"
	envK8sJobName            = "K8S_JOB_NAME"
)

// DetectKubernetes returns the Kubernetes attributes (SPEC §1.5). It is
// active iff KUBERNETES_SERVICE_HOST is non-empty or
// [Options.KubernetesSecretsPath] (default [DefaultKubernetesSecretsPath])
// exists, whatever its file type (a dangling symbolic link does not count,
// as with Python's os.path.exists); inactive gives an empty map. Nothing is
// read from the path and nothing touches the network or the API server.
//
// Keys, in this order, each from its variable; empty values are skipped and
// nothing is trimmed:
//
//	k8s.namespace.name  K8S_NAMESPACE
//	k8s.pod.name        K8S_POD_NAME; when absent or empty, HOSTNAME
//	k8s.pod.uid         K8S_POD_UID
//	k8s.node.name       K8S_NODE_NAME
//	k8s.container.name  K8S_CONTAINER_NAME
//	k8s.job.name        K8S_JOB_NAME
//
// Active with nothing set gives an empty map. The docs phrase the HOSTNAME
// fallback as "only when unset"; like the reference implementation, an empty
// K8S_POD_NAME counts as unset.
func DetectKubernetes(opts Options) *attr.Map {
	m := &attr.Map{}
	detectKubernetesInto(&opts, m)
	return m
}

// kubernetesActive reports whether KUBERNETES_SERVICE_HOST is non-empty or
// the secrets path exists (os.Stat: any file type, symbolic links followed,
// nothing opened).
func kubernetesActive(opts *Options) bool {
	if _, ok := lookupNonEmpty(opts.env(), envKubernetesServiceHost); ok {
		return true
	}
	path := opts.KubernetesSecretsPath
	if path == "" {
		path = DefaultKubernetesSecretsPath
	}
	_, err := os.Stat(path)
	return err == nil
}

func detectKubernetesInto(opts *Options, m *attr.Map) {
	if !kubernetesActive(opts) {
		return
	}
	env := opts.env()
	e := opts.Explain
	set := func(key string, names ...string) {
		for _, name := range names {
			if v, ok := lookupNonEmpty(env, name); ok {
				m.Set(key, attr.String(v))
				if e != nil {
					e.Record(key, "env "+name)
				}
				return
			}
		}
	}
	set(semconv.K8sNamespaceName, envK8sNamespace)
	set(semconv.K8sPodName, envK8sPodName, envHostname)
	set(semconv.K8sPodUID, envK8sPodUID)
	set(semconv.K8sNodeName, envK8sNodeName)
	set(semconv.K8sContainerName, envK8sContainerName)
	set(semconv.K8sJobName, envK8sJobName)
}
