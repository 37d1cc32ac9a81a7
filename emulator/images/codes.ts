/** The personal image API's values, shared by the store, the state schema and the instances that save images. */

// docs/design/cloud-api.md#personal-images
/** save_image_status values. */
export const SAVE_STATUS = { UPLOADING: 1, SUCCEEDED: 2, FAILED: 3 } as const;
