package resourcepoolstatusrequest

import (
	resourcev1 "k8s.io/api/resource/v1"
)

// deviceUnavailable reports whether a device counts as unavailable: it
// carries a NoSchedule or NoExecute taint, or a DeviceTaintRule applies
// one to it.
func deviceUnavailable(driver, pool string, device *resourcev1.Device, rules []*resourcev1.DeviceTaintRule) bool {
	for _, t := range device.Taints {
		if blocks(t.Effect) {
			return true
		}
	}
	for _, r := range rules {
		if blocks(r.Spec.Taint.Effect) && selects(r.Spec.DeviceSelector, driver, pool, device.Name) {
			return true
		}
	}
	return false
}

// blocks reports whether a taint effect keeps new allocations off a device.
func blocks(e resourcev1.DeviceTaintEffect) bool {
	return e == resourcev1.DeviceTaintEffectNoSchedule || e == resourcev1.DeviceTaintEffectNoExecute
}

// selects reports whether a rule's selector matches the device: each field
// that is set must match; a nil selector matches nothing.
func selects(sel *resourcev1.DeviceTaintSelector, driver, pool, device string) bool {
	if sel == nil {
		return false
	}
	match := func(want *string, have string) bool { return want == nil || *want == have }
	return match(sel.Driver, driver) && match(sel.Pool, pool) && match(sel.Device, device)
}
