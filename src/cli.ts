#!/usr/bin/env node
import { main } from './cli/main.js'

// the package's bin (`gatehouse`): the commands live in src/cli/, one file per group
process.exitCode = await main(process.argv.slice(2))
