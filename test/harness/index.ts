export * from "./capture";
export * from "./lifecycle";
export * from "./server";
