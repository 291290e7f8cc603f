export * from "./IntegrationCommand.js"
