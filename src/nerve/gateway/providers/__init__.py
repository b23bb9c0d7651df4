"""Providers: one class per wire protocol (openai, anthropic); vendors are rows in presets."""

from __future__ import annotations

import aiohttp

from nerve.config import ProviderConfig
from nerve.gateway.providers.anthropic import AnthropicProvider
from nerve.gateway.providers.base import Completion, Provider, Stream
from nerve.gateway.providers.openai import OpenAIProvider

__all__ = ["PROTOCOLS", "Completion", "Provider", "Stream", "build_provider"]

PROTOCOLS: dict[str, type[Provider]] = {"openai": OpenAIProvider, "anthropic": AnthropicProvider}


def build_provider(config: ProviderConfig, session: aiohttp.ClientSession) -> Provider:
    return PROTOCOLS[config.protocol](config, session)
