/** The personal image API's values, shared by the store, the state schema and the instances that save images. */

// api-v2.md, Personal image.
/** save_image_status values. */
export const SAVE_STATUS = { UPLOADING: 1, SUCCEEDED: 2, FAILED: 3 } as const;
