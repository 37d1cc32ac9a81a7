/** The repository's miniature Pulumi engine, imported in this one place (its folder may move). */
export { REPO_ROOT, secret, Stack, type OperationResult, type Step } from "../../engine";
