// Package controllermanager is the seam between the command and the
// controllers: the ControllerContext every constructor receives, the
// Descriptor registry behind --controllers, and RunControllers, which starts
// the enabled controllers and waits for them to stop.
package controllermanager
