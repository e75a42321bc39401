module github.com/xxl-admin-go/xxl-admin-go/deploy/helm

go 1.26.8

require (
	github.com/stretchr/testify v1.12.1 // indirect
	go.yaml.in/yaml/v2 v2.4.4 // indirect
	helm.sh/helm/v3 v3.22.0 // indirect
	k8s.io/api v0.37.2 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)
