package plugins

import (
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// Registry lists every wattsched plugin with its factory, for
// scheduler.WithFrameworkOutOfTreeRegistry or app.WithPlugin.
func Registry() frameworkruntime.Registry {
	return frameworkruntime.Registry{
		GPUName:           NewGPU,
		BudgetName:        NewBudget,
		PWRName:           NewPWR,
		EnergyName:        NewEnergy,
		FGDName:           NewFGD,
		BestFitName:       NewBestFit,
		DotProdName:       NewDotProd,
		GpuPackingName:    NewGpuPacking,
		GpuClusteringName: NewGpuClustering,
	}
}
