package deploycheck

import (
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Object is a rendered manifest decoded into its Kubernetes API type.
type Object struct {
	Manifest
	APIVersion, Kind, Name string
	Value                  any // *appsv1.Deployment, *corev1.Service, *ServiceMonitor, …
}

// ID is "Kind/name".
func (o Object) ID() string { return o.Kind + "/" + o.Name }

// kinds are the API types the chart may render, by "apiVersion Kind".
var kinds = map[string]func() any{
	"apps/v1 Deployment":                      func() any { return &appsv1.Deployment{} },
	"apps/v1 DaemonSet":                       func() any { return &appsv1.DaemonSet{} },
	"batch/v1 Job":                            func() any { return &batchv1.Job{} },
	"v1 Service":                              func() any { return &corev1.Service{} },
	"v1 Secret":                               func() any { return &corev1.Secret{} },
	"policy/v1 PodDisruptionBudget":           func() any { return &policyv1.PodDisruptionBudget{} },
	"networking.k8s.io/v1 NetworkPolicy":      func() any { return &networkingv1.NetworkPolicy{} },
	"monitoring.coreos.com/v1 ServiceMonitor": func() any { return &ServiceMonitor{} },
}

// ServiceMonitor is the part of the Prometheus Operator's ServiceMonitor
// (monitoring.coreos.com/v1) the chart uses; a field outside it fails the
// strict decoding, as an unknown field of a built-in type does.
type ServiceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			Any        bool     `json:"any,omitempty"`
			MatchNames []string `json:"matchNames,omitempty"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// Decode decodes m strictly into its API type: an unknown or duplicate
// field, a kind the chart is not expected to render, a value of the wrong
// type or an invalid name or label fails.
func Decode(m Manifest) (Object, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal([]byte(m.YAML), &tm); err != nil {
		return Object{}, fmt.Errorf("%s: %w", m.Source, err)
	}
	o := Object{Manifest: m, APIVersion: tm.APIVersion, Kind: tm.Kind}
	newValue, ok := kinds[tm.APIVersion+" "+tm.Kind]
	if !ok {
		return o, fmt.Errorf("%s: unexpected kind %s %s", m.Source, tm.APIVersion, tm.Kind)
	}
	o.Value = newValue()
	if err := strictUnmarshal(m.YAML, o.Value); err != nil {
		return o, fmt.Errorf("%s (%s): strict decoding: %w", m.Source, tm.Kind, err)
	}
	meta := objectMeta(o.Value)
	o.Name = meta.Name
	return o, checkMeta(o.ID(), meta)
}

// strictUnmarshal decodes YAML as the API server's strict field
// validation does (sigs.k8s.io/json, which kubectl --validate=strict
// uses): a duplicate key, an unknown field (named by its whole path, e.g.
// spec.template.spec.containers[0].readinessProbe.httpGet.pth), a field in
// the wrong case or of the wrong type fails.
func strictUnmarshal(text string, v any) error {
	js, err := yaml.YAMLToJSONStrict([]byte(text))
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(js, v)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

func objectMeta(v any) metav1.ObjectMeta {
	if sm, ok := v.(*ServiceMonitor); ok {
		return sm.ObjectMeta
	}
	return *v.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
}

// checkMeta checks the name is a DNS subdomain (a DNS label for a Service),
// the namespace is set and every label key and value is valid.
func checkMeta(id string, meta metav1.ObjectMeta) error {
	var errs []string
	errs = append(errs, validation.IsDNS1123Subdomain(meta.Name)...)
	if strings.HasPrefix(id, "Service/") {
		errs = append(errs, validation.IsDNS1035Label(meta.Name)...)
	}
	if meta.Namespace == "" {
		errs = append(errs, "no namespace")
	}
	for k, v := range meta.Labels {
		errs = append(errs, validation.IsQualifiedName(k)...)
		errs = append(errs, validation.IsValidLabelValue(v)...)
	}
	if len(errs) > 0 {
		return errors.New(id + ": " + strings.Join(errs, "; "))
	}
	return nil
}
