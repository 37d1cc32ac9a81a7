export * from "../../engine/server";
