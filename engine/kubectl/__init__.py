"""Kubernetes API plumbing shared by the kubectl formatter and the real-cluster substrate.

* :mod:`engine.kubectl.gofmt` -- byte-exact ports of the Go pieces kubectl's output depends on
  (``text/tabwriter``, ``sort.Sort``, ``encoding/json`` indentation, ``HumanDuration``);
* :mod:`engine.kubectl.goyaml` -- the YAML that ``kubectl -o yaml`` writes (``sigs.k8s.io/yaml``);
* :mod:`engine.kubectl.quantity` -- exact resource quantities (``k8s.io/apimachinery`` semantics);
* :mod:`engine.kubectl.apiobjects` -- objects as an API server serves them: defaults, selectors,
  references, EndpointSlices;
* :mod:`engine.kubectl.printers` and :mod:`engine.kubectl.describe` -- ``kubectl get`` and
  ``kubectl describe`` as pure functions; the API server (:mod:`engine.kube.apiserver`) builds
  its server-side tables from the same printer cells.
"""
